"""The sections of report.md, a module each; efabplot.report puts them in
their order."""
