"""A stand-in service package for the supervisor tests; see __main__.py."""
