"""Paired statistics as pure functions over plain values: no I/O, no global state.

**Usage**::

    from pairbench.analysis import mcnemar_exact, paired_counts, wilson

    counts = paired_counts(a_passed, b_passed)
    p = mcnemar_exact(counts.a_only, counts.b_only)
    rate = wilson(sum(a_passed), len(a_passed))
"""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BootstrapInterval": "pairbench.analysis._bootstrap",
        "CampaignInterval": "pairbench.analysis._campaign",
        "CensoredDifference": "pairbench.analysis._censored",
        "CensoredMedian": "pairbench.analysis._censored",
        "CensoredMedianDifference": "pairbench.analysis._censored",
        "ClusteredMean": "pairbench.analysis._clustered",
        "ConfusionMatrix": "pairbench.analysis._agreement",
        "HodgesLehmann": "pairbench.analysis._hodges_lehmann",
        "MedianDifference": "pairbench.analysis._median",
        "PairedCounts": "pairbench.analysis._paired",
        "PairedEquivalence": "pairbench.analysis._hypotheses",
        "PairedMeanDifference": "pairbench.analysis._hypotheses",
        "PairedProportionDifference": "pairbench.analysis._newcombe",
        "PowerRow": "pairbench.analysis._power",
        "Proportion": "pairbench.analysis._wilson",
        "RateEquivalence": "pairbench.analysis._hypotheses",
        "Repeatability": "pairbench.analysis._agreement",
        "ScenarioGrid": "pairbench.analysis._scenario_grid",
        "ScenarioRow": "pairbench.analysis._scenario_grid",
        "SignFlipInterval": "pairbench.analysis._campaign",
        "SignFlipTest": "pairbench.analysis._campaign",
        "campaign_t_interval": "pairbench.analysis._campaign",
        "censored_median": "pairbench.analysis._censored",
        "censored_paired_differences": "pairbench.analysis._censored",
        "cluster_bootstrap": "pairbench.analysis._bootstrap",
        "cluster_bootstrap_paired": "pairbench.analysis._bootstrap",
        "clustered_standard_error": "pairbench.analysis._clustered",
        "confusion_matrix": "pairbench.analysis._agreement",
        "discordant_share_interval": "pairbench.analysis._discordant_share",
        "hodges_lehmann": "pairbench.analysis._hodges_lehmann",
        "holm": "pairbench.analysis._multiplicity",
        "mcnemar_exact": "pairbench.analysis._mcnemar",
        "mcnemar_midp": "pairbench.analysis._mcnemar",
        "mcnemar_p": "pairbench.analysis._discordant_share",
        "mcnemar_power": "pairbench.analysis._power",
        "mcnemar_sample_size": "pairbench.analysis._power",
        "median": "pairbench.analysis._median",
        "order_statistic_rank": "pairbench.analysis._median",
        "paired_counts": "pairbench.analysis._paired",
        "paired_equivalence": "pairbench.analysis._hypotheses",
        "paired_mean_difference": "pairbench.analysis._hypotheses",
        "paired_median_difference": "pairbench.analysis._median",
        "paired_median_difference_censored": "pairbench.analysis._censored",
        "paired_proportion_difference": "pairbench.analysis._newcombe",
        "paired_rate_equivalence": "pairbench.analysis._hypotheses",
        "phi_correlation": "pairbench.analysis._newcombe",
        "power_table": "pairbench.analysis._power",
        "repeatability": "pairbench.analysis._agreement",
        "scenario_grid": "pairbench.analysis._scenario_grid",
        "sign_flip_interval": "pairbench.analysis._campaign",
        "sign_flip_test": "pairbench.analysis._campaign",
        "smallest_attainable_p": "pairbench.analysis._campaign",
        "wilson": "pairbench.analysis._wilson",
    },
)

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
