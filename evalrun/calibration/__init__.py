"""`evalrun calibrate`: how often a grader agrees with a person's labels (or with another grader) on a suite, and
the threshold that fits those labels. stats.py is pure; labels.py reads and matches labels; analysis.py builds the
figures from result records; text.py and page.py render them."""
