"""GraphQL: our fields as string scalars, for graphene-django and strawberry-django."""
