"""Database plumbing shared by the features: one statement that hands back one integer
(``returning``) and connections of our own outside the caller's transaction
(``connections``)."""
