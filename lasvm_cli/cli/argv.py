"""svm-train's, svm-predict's and svm-scale's command lines, read as LIBSVM reads them."""


def read_options(argv, usage, long_flags=(), long_values=(), short_flags="q"):
    """LIBSVM's option loop (svm-train.c, svm-predict.c): options come first and end at the
    first word not starting with '-' (or at '-' itself). Returns ([(name, value, word)],
    operands), where for

    - ``--name`` in ``long_flags``: value None;
    - ``--name`` in ``long_values``: the text after '=' or the next word;
    - ``-c...``: name '-c' (only the character after '-' counts, ``-cost 5`` is ``-c 5``),
      value the next word, or None for a letter in ``short_flags`` (``-q``); ``word`` is the
      option word itself (``-w1`` carries its class in it).

    A value missing at the end is a UsageExit with ``usage`` (LIBSVM's exit_with_help). A long
    option not listed is a ParameterError naming it and the closest listed one: LIBSVM has no
    long options, and a usage of a hundred lines would scroll the message away."""
    from .report import UsageExit

    found = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name, eq, text = word.partition("=")
            if name in long_flags:
                text = None
            elif name not in long_values:
                raise unknown_long_option(name, list(long_flags) + list(long_values), usage)
            elif not eq:
                i += 1
                if i >= len(argv):
                    raise UsageExit(usage)
                text = argv[i]
            found.append((name, text, word))
        elif word[1] in short_flags:
            found.append(("-" + word[1], None, word))
        else:
            i += 1
            if i >= len(argv):
                raise UsageExit(usage)
            found.append(("-" + word[1], argv[i], word))
        i += 1
    return found, argv[i:]


def unknown_long_option(name, known, usage):
    """ParameterError for ``--name``: click's "Did you mean" and where the options are listed
    (the program: the usage's second word)."""
    import difflib

    from ..base.errors import ParameterError

    program = usage.split()[1] if len(usage.split()) > 1 else "the command"
    # compared without the "--" that every name shares (it would make --bogus "close" to --runs)
    close = difflib.get_close_matches(name[2:], sorted(k[2:] for k in known), n=1)
    hint = f" (did you mean --{close[0]}?)" if close else ""
    return ParameterError(f"Unknown option: {name}{hint}\nRun {program} without arguments for "
                          "its options.")
