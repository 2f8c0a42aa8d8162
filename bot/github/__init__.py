"""Everything that talks to GitHub: tokens, the API client, typed endpoint helpers."""
