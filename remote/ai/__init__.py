"""Everything that talks to a model."""
