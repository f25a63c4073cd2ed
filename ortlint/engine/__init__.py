"""The engine: one analysis over the IR for every language, driven by the policy (see docs/architecture.md)."""
