"""A tiny shop: a catalogue and its paginated listing."""
