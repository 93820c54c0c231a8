"""`remote studio`: a local web page to see what remote sees, point at an element and get the step.

    screens.py    where screens come from: the live phone (frames, and screens with their tree), or a file
    inspector.py  what is at a point and every target_ref that finds it (the learning compiler's forms, a crop)
    draft.py      the template being built: steps, YAML checked as `modules check` checks it, saving it
    acting.py     steps run on the phone through the runner, with its gates (sensitive steps, allow list)
    recording.py  record mode: each action on the page goes to the phone and becomes a step
    runs.py       a run record: its steps, screens, and a step decided again as `remote replay` does
    guard.py      loopback by default, a token beyond it, Host/Origin checks, bounded bodies
    app.py        the starlette app: the page (static/) and the JSON API (docs/studio.md)

The edge layer: it builds on the runner and the modules, nothing below imports it.
"""
