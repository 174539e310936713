"""Releases: build, verify and publish versioned task sets; the public runner's format in and out."""
