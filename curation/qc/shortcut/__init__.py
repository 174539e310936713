"""The metadata-only shortcut filter: inspectors that see only what the app shows of a feed's videos (prompts,
inspectors, the local model server), asking them (ask), recording their verdicts (record), the stage (filter) and
its page (report)."""
