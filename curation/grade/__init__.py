"""After the release: grading the public runner's episode logs, reward data, trajectory audits."""
