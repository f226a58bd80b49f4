"""The steps of scripts/train_eval.py (the command line stays there): ``selfplay`` makes the
games, ``examples`` turns them into training arrays, ``model`` is the fitted evaluation's float
model and its data file, ``fit`` the fit step, ``matches`` and ``speed`` measure the result.
What a cluster worker runs lives in ref_sim.selfplay: workers have agent and ref_sim installed, not
scripts."""
