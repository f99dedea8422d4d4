"""Database plumbing shared by the features: one statement that hands back one integer
(``returning``)."""
