"""The patch series: apply, export, check, b4, the mailing list, stable."""
