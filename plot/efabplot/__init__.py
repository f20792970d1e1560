"""efabplot: the code of the command efab_plot (plot/efab_plot), figures and a
comparison report from efabench result directories. Modules, lowest first
(each imports only modules above it in this list; tests/plot_imports.py
checks there is no cycle):

    fmt        formatting: sizes, numbers from CSV cells, counts, markdown cells
    schema     the CSV schemas read (1 and 2) and each benchmark's columns
    load       loading: result directories, their CSVs by schema, meta.json
    stats      statistics and verdicts: Point, the significance rule, the gate
    grouping   series and groups: series_key, groups, comparisons, build()
    pathrows   the rows of the proof-of-path sections
    figbase    what every figure shares (axes, caption room, the cold marker)
    captions   every figure's caption
    fig_latbw  latency, bandwidth and connect figures
    fig_reg    registration figures (small multiples)
    figures    which figure each benchmark gets
    sections/  the report's sections, one module each
    report     report.md: the sections in their order
    cli        the command line (efab_plot's main)
"""
