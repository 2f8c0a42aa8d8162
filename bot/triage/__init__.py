"""Pure triage core: plain data in, plain data out, no I/O."""
