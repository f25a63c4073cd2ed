"""frontends."""
