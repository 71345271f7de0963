from evalrun.cli import main

raise SystemExit(main())
