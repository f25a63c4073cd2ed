"""clang."""
