"""Media: link video files to catalog videos, probe them, normalise them for the app's canvas."""
