"""`evalrun view`: a local, read-only web app over a `.evalrun` folder's runs, drawn by report/report.js."""
