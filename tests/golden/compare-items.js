sitegen.data("compare-items",
{
  "cell_columns": [
    "steps",
    "reward_mean",
    "reward_max",
    "reward_last",
    "pass_at_k",
    "step_time",
    "gen_wait",
    "gen_wait_share",
    "avg_tokens",
    "staleness",
    "success",
    "error"
  ],
  "columns": [
    "kind",
    "id",
    "url",
    "status",
    "cells",
    "last_activity",
    "findings",
    "config",
    "tasks"
  ],
  "config_keys": [
    "generator.num_inference_engines",
    "trainer.ckpt_interval",
    "trainer.ckpt_path",
    "trainer.logger",
    "trainer.run_name"
  ],
  "config_values": [
    [
      "3",
      "1",
      "2",
      "0"
    ],
    [
      "2",
      "4",
      "3"
    ],
    [
      "/ckpt/async-run",
      "/ckpt/sync",
      "/ckpt/stale",
      "/ckpt/live",
      "/ckpt/chain"
    ],
    [
      "wandb",
      "console"
    ],
    [
      "async-run",
      "sync-baseline",
      "stale",
      "live",
      "chain"
    ]
  ],
  "finding_columns": [
    "id",
    "severity",
    "title",
    "section"
  ],
  "groups": [
    [
      4,
      7,
      8
    ],
    [
      3,
      9
    ],
    [
      2,
      10
    ],
    [
      1,
      11
    ],
    [
      0,
      5,
      6
    ]
  ],
  "rows": [
    [
      "run",
      "exp-async",
      "runs/exp-async/",
      "complete",
      [
        "8",
        "0.3590",
        "0.4000",
        "0.3422",
        "0.5937 @8",
        "11.8 min",
        "9.8 min",
        "83.1%",
        "1,772.4",
        "1.678 (max 9)",
        "35.0%",
        "15.0%"
      ],
      "2026-02-11T00:45:54.642000",
      [
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ],
        [
          "gen_wait_high",
          "warning",
          "83% of step time waits for generation",
          "rollouts"
        ]
      ],
      [
        0,
        0,
        0,
        0,
        0
      ],
      "runs/exp-async/"
    ],
    [
      "run",
      "flat.sync-baseline.train_600100",
      "runs/flat.sync-baseline.train_600100/",
      "failed",
      [
        "4",
        "0.3942",
        "0.4871",
        "0.3555",
        "0.6342 @8",
        "4.7 min",
        "2.7 min",
        "57.0%",
        "1,873.1",
        "–",
        "37.5%",
        "12.5%"
      ],
      "2026-02-13T00:18:46.692000",
      [
        [
          "job_failed",
          "error",
          "Last job failed",
          "overview"
        ],
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ]
      ],
      [
        1,
        1,
        1,
        1,
        1
      ],
      "jobs/flat.sync-baseline.train_600100/"
    ],
    [
      "run",
      "flat.stale.train_600150",
      "runs/flat.stale.train_600150/",
      "running",
      [
        "2",
        "0.3726",
        "0.3923",
        "0.3530",
        "0.5984 @8",
        "13.3 min",
        "11.4 min",
        "86.3%",
        "1,609.1",
        "1.645 (max 9)",
        "–",
        "–"
      ],
      "2026-02-14T00:26:32.562000",
      [
        [
          "gen_wait_high",
          "warning",
          "86% of step time waits for generation",
          "timing"
        ]
      ],
      [
        2,
        1,
        2,
        0,
        2
      ],
      null
    ],
    [
      "run",
      "flat.live.train_600200",
      "runs/flat.live.train_600200/",
      "running",
      [
        "3",
        "0.2962",
        "0.3313",
        "0.2598",
        "0.5351 @8",
        "10.5 min",
        "8.5 min",
        "81.0%",
        "1,646.5",
        "3.639 (max 9)",
        "–",
        "–"
      ],
      "2026-02-15T00:31:35.961000",
      [
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ],
        [
          "gen_wait_high",
          "warning",
          "81% of step time waits for generation",
          "timing"
        ]
      ],
      [
        3,
        1,
        3,
        1,
        3
      ],
      null
    ],
    [
      "run",
      "flat.chain-a.train_600300",
      "runs/flat.chain-a.train_600300/",
      "complete",
      [
        "8",
        "0.3785",
        "0.4365",
        "0.3692",
        "0.6045 @8",
        "11.1 min",
        "9.1 min",
        "82.7%",
        "1,641.7",
        "2.183 (max 8)",
        "–",
        "–"
      ],
      "2026-02-20T00:55:45.288000",
      [
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ],
        [
          "gen_wait_high",
          "warning",
          "83% of step time waits for generation",
          "timing"
        ]
      ],
      [
        2,
        2,
        4,
        1,
        4
      ],
      null
    ],
    [
      "job",
      "exp-async.async-run_561773",
      "jobs/exp-async.async-run_561773/",
      "cancelled",
      [
        "6",
        "0.3646",
        "0.4336",
        "0.4336",
        "0.5723 @8",
        "10.7 min",
        "8.6 min",
        "81.1%",
        "1,724.8",
        "2.686 (max 9)",
        "–",
        "–"
      ],
      "2026-02-08T01:03:55.596000",
      [
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ],
        [
          "gen_wait_high",
          "warning",
          "81% of step time waits for generation",
          "timing"
        ],
        [
          "job_time_limit",
          "info",
          "Job reached its SLURM time limit",
          "overview"
        ]
      ],
      [
        2,
        0,
        0,
        1,
        0
      ],
      null
    ],
    [
      "job",
      "exp-async.async-run_561774",
      "jobs/exp-async.async-run_561774/",
      "complete",
      [
        "4",
        "0.3614",
        "0.4000",
        "0.3422",
        "0.6098 @8",
        "11.5 min",
        "9.5 min",
        "82.8%",
        "1,751.3",
        "1.555 (max 7)",
        "–",
        "–"
      ],
      "2026-02-11T00:45:54.642000",
      [
        [
          "gen_wait_high",
          "warning",
          "83% of step time waits for generation",
          "timing"
        ]
      ],
      [
        0,
        0,
        0,
        0,
        0
      ],
      null
    ],
    [
      "job",
      "flat.chain-a.train_600300",
      "jobs/flat.chain-a.train_600300/",
      "cancelled",
      [
        "4",
        "0.3747",
        "0.4365",
        "0.3679",
        "0.5763 @8",
        "10.1 min",
        "8.2 min",
        "80.5%",
        "1,677.2",
        "2.188 (max 8)",
        "–",
        "–"
      ],
      "2026-02-18T00:40:35.204000",
      [
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ],
        [
          "gen_wait_high",
          "warning",
          "81% of step time waits for generation",
          "timing"
        ],
        [
          "job_cancelled",
          "warning",
          "Job was cancelled",
          "overview"
        ]
      ],
      [
        2,
        2,
        4,
        1,
        4
      ],
      null
    ],
    [
      "job",
      "flat.chain-b.train_600301",
      "jobs/flat.chain-b.train_600301/",
      "complete",
      [
        "5",
        "0.3795",
        "0.4175",
        "0.3692",
        "0.6134 @8",
        "11.2 min",
        "9.3 min",
        "83.0%",
        "1,607.9",
        "2.362 (max 6)",
        "–",
        "–"
      ],
      "2026-02-20T00:55:45.288000",
      [
        [
          "gen_wait_high",
          "warning",
          "83% of step time waits for generation",
          "timing"
        ]
      ],
      [
        2,
        2,
        4,
        1,
        4
      ],
      null
    ],
    [
      "job",
      "flat.live.train_600200",
      "jobs/flat.live.train_600200/",
      3
    ],
    [
      "job",
      "flat.stale.train_600150",
      "jobs/flat.stale.train_600150/",
      2
    ],
    [
      "job",
      "flat.sync-baseline.train_600100",
      "jobs/flat.sync-baseline.train_600100/",
      "failed",
      [
        "4",
        "0.3942",
        "0.4871",
        "0.3555",
        "0.6342 @8",
        "4.7 min",
        "2.7 min",
        "57.0%",
        "1,873.1",
        "–",
        "37.5%",
        "12.5%"
      ],
      "2026-02-13T00:18:46.692000",
      [
        [
          "job_failed",
          "error",
          "Job failed",
          "overview"
        ],
        [
          "non_finite_metric",
          "warning",
          "NaN or infinite policy/policy_kl",
          "policy"
        ]
      ],
      [
        1,
        1,
        1,
        1,
        1
      ],
      "jobs/flat.sync-baseline.train_600100/"
    ]
  ]
}
);
