from curation.cli import app

app()
