"""The desk's named, parameterised statements, one module per aggregate."""
