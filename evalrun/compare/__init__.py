"""`evalrun compare`: load two runs (load), pair their cases across edited prompts (match), decide what
changed with intervals over repeats and roll it up per provider x prompt, test and metric (diff), and
render it (render: console, Markdown; report/html: HTML)."""
