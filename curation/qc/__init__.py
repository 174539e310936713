"""Quality control: task validation, the metadata-only shortcut filter."""
