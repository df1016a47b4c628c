"""Cells of the CSV files the service writes, made safe to open in a spreadsheet."""

# A cell a spreadsheet would read as a formula (CSV injection): kept as text behind a quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value
