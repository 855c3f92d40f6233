"""Paired statistics as pure functions over plain values: no I/O, no global state.

**Usage**::

    from pairbench.analysis import mcnemar_exact, paired_counts, wilson

    counts = paired_counts(a_passed, b_passed)
    p = mcnemar_exact(counts.a_only, counts.b_only)
    rate = wilson(sum(a_passed), len(a_passed))
"""

from pairbench.analysis._agreement import (
    ConfusionMatrix,
    Repeatability,
    confusion_matrix,
    repeatability,
)
from pairbench.analysis._bootstrap import (
    BootstrapInterval,
    cluster_bootstrap,
    cluster_bootstrap_paired,
)
from pairbench.analysis._campaign import (
    CampaignInterval,
    SignFlipInterval,
    SignFlipTest,
    campaign_t_interval,
    sign_flip_interval,
    sign_flip_test,
    smallest_attainable_p,
)
from pairbench.analysis._censored import (
    CensoredDifference,
    CensoredMedian,
    CensoredMedianDifference,
    censored_median,
    censored_paired_differences,
    paired_median_difference_censored,
)
from pairbench.analysis._clustered import ClusteredMean, clustered_standard_error
from pairbench.analysis._discordant_share import discordant_share_interval, mcnemar_p
from pairbench.analysis._hodges_lehmann import HodgesLehmann, hodges_lehmann
from pairbench.analysis._hypotheses import (
    PairedEquivalence,
    PairedMeanDifference,
    RateEquivalence,
    paired_equivalence,
    paired_mean_difference,
    paired_rate_equivalence,
)
from pairbench.analysis._mcnemar import mcnemar_exact, mcnemar_midp
from pairbench.analysis._median import (
    MedianDifference,
    median,
    order_statistic_rank,
    paired_median_difference,
)
from pairbench.analysis._multiplicity import holm
from pairbench.analysis._newcombe import (
    PairedProportionDifference,
    paired_proportion_difference,
    phi_correlation,
)
from pairbench.analysis._paired import PairedCounts, paired_counts
from pairbench.analysis._power import PowerRow, mcnemar_power, mcnemar_sample_size, power_table
from pairbench.analysis._scenario_grid import ScenarioGrid, ScenarioRow, scenario_grid
from pairbench.analysis._wilson import Proportion, wilson

__all__ = [
    "BootstrapInterval",
    "CampaignInterval",
    "CensoredDifference",
    "CensoredMedian",
    "CensoredMedianDifference",
    "ClusteredMean",
    "ConfusionMatrix",
    "HodgesLehmann",
    "MedianDifference",
    "PairedCounts",
    "PairedEquivalence",
    "PairedMeanDifference",
    "PairedProportionDifference",
    "PowerRow",
    "Proportion",
    "RateEquivalence",
    "Repeatability",
    "ScenarioGrid",
    "ScenarioRow",
    "SignFlipInterval",
    "SignFlipTest",
    "campaign_t_interval",
    "censored_median",
    "censored_paired_differences",
    "cluster_bootstrap",
    "cluster_bootstrap_paired",
    "clustered_standard_error",
    "confusion_matrix",
    "discordant_share_interval",
    "hodges_lehmann",
    "holm",
    "mcnemar_exact",
    "mcnemar_midp",
    "mcnemar_p",
    "mcnemar_power",
    "mcnemar_sample_size",
    "median",
    "order_statistic_rank",
    "paired_counts",
    "paired_equivalence",
    "paired_mean_difference",
    "paired_median_difference",
    "paired_median_difference_censored",
    "paired_proportion_difference",
    "paired_rate_equivalence",
    "phi_correlation",
    "power_table",
    "repeatability",
    "scenario_grid",
    "sign_flip_interval",
    "sign_flip_test",
    "smallest_attainable_p",
    "wilson",
]
