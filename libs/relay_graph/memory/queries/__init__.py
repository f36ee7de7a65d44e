"""The memory engine's named, parameterised statements, one module per aggregate."""
