"""The statements of the operator's and the staff console's use cases."""
