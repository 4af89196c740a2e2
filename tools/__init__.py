"""Repository tooling: run from a clone, never installed with the package."""
