from curation.cli import main

main()
