"""The lab's and the simulated world's named, parameterised statements."""
