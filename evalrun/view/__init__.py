"""`evalrun view`: a local, read-only web app over the run history and results files of a `.evalrun` folder.

    catalogue.py   which runs there are (history rows, results files the history does not name)
    index.py       one results file read incrementally (a run in progress grows), for pages and aggregates
    query.py       the case table's filters and pages (the rules report.js applies in the static report)
    diffs.py       two runs compared, as `evalrun compare` does, kept for paging
    server.py      the HTTP server (standard library, GET only) and its JSON endpoints
The page itself (app.html, view.js) renders with the HTML report's own renderer (report/report.js).
"""
