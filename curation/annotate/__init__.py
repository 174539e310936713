"""Annotation: feeds out to Label Studio authoring projects, tasks and feed edits back."""
