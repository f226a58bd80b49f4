"""Where a series' games are played: the runners the loop plays on.

* :mod:`.scheduler`: the runners' interface (a :class:`~.scheduler.Ticket` per game), games in
  threads of this process or inline, and :func:`~.scheduler.stream`, which feeds any runner.
* :mod:`.cluster`: the same runner on a Dask cluster (``--cluster``): connecting, submitting,
  retrying games of lost workers, the summary's lines on workers.
* :mod:`.cluster_address`: the scheduler's address and the options that give it (no Dask);
  :mod:`.cluster_reach`: the first look at a scheduler and why TLS fails;
  :mod:`.admission`: which workers may play (the same code as the client);
  :mod:`.shipping`: a game's files sent back from a worker; :mod:`.cluster_tls`: the cluster's
  certificates.

Nothing here starts or contains a bot (:mod:`ref_sim.series.process`); only a series given a
cluster imports Dask.
"""
