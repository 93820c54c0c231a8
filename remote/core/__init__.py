"""Everything that does not need a model."""
