"""Print the text of a PDF (an example file of the fixture's skill, never run)."""
