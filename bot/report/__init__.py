"""Pure rendering of everything the bot writes on GitHub, no I/O."""
