"""`evalrun view`: a local, read-only web app over the runs and results files of a `.evalrun` folder, rendered by
the HTML report's own renderer (report/report.js)."""
