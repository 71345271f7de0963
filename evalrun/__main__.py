import sys

try:
    from evalrun.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C in the milliseconds before cli.main sets its handler (evalrun/signals.py)
    print("evalrun: interrupted", file=sys.stderr)
    code = 130
raise SystemExit(code)
