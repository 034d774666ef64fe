"""One module per op family; each defines CASES (see tests/cases.py)."""
