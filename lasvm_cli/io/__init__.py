"""Data in and models out: svmlight files, model files, scale files."""
