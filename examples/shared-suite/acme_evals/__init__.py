"""acme_evals: the shared evalrun checks of a (fictional) support team, used through pkg://acme_evals/..."""
