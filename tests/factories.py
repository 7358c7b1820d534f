"""factory_boy factories for the runs store."""

import factory

from runs.models import Cell, Config, Image, WorkflowRun, config_identity_hash
from runs.parsing.records import ConfigIdentity


class WorkflowRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkflowRun

    repository = "SemiAnalysisAI/InferenceX"
    run_id = factory.Sequence(lambda n: 30_000_000_000 + n)
    run_attempt = 1
    workflow_name = "Run Sweep"
    workflow_path = ".github/workflows/run-sweep.yml"
    event = "push"
    head_branch = "main"
    head_sha = factory.Sequence(lambda n: f"{n:040x}")
    status = "completed"
    conclusion = "success"
    is_official = True


class ConfigFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Config

    model_prefix = "dsr1"
    model = "deepseek-ai/DeepSeek-R1-0528"
    hardware = "b200"
    runner_label = "b200-nv_0"
    framework = "sglang"
    precision = "fp8"
    spec_method = "none"
    tp = 8
    ep = 1
    dp_attention = False
    identity_hash = factory.LazyAttribute(
        lambda o: config_identity_hash(
            ConfigIdentity(
                **{
                    name: getattr(o, name)
                    for name in ConfigIdentity.__dataclass_fields__
                    if hasattr(o, name)
                }
            )
        )
    )


class CellFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cell

    run = factory.SubFactory(WorkflowRunFactory)
    config = factory.SubFactory(ConfigFactory)
    scenario = "1k1k"
    isl = 1024
    osl = 1024
    concurrency = factory.Sequence(lambda n: 2 ** (n % 9))
    tput_per_gpu = 1000.0
    median_e2el = 10.0
    p90_e2el = 12.0


class ImageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Image
        django_get_or_create = ("reference",)

    reference = factory.Sequence(lambda n: f"lmsysorg/sglang:v0.5.{n}")
    repository = factory.LazyAttribute(lambda o: o.reference.split(":")[0])
    tag = factory.LazyAttribute(lambda o: o.reference.partition(":")[2])


class EvalResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "runs.EvalResult"  # by label, so this append leaves the imports alone

    run = factory.SubFactory(WorkflowRunFactory)
    config = factory.SubFactory(ConfigFactory)
    task = "gsm8k"
    n_shot = 5
    concurrency = factory.Sequence(lambda n: 2 ** (n % 9))
    scenario = "1k1k"
    em_strict = 0.95
    em_strict_se = 0.005
    em_flexible = 0.95
    em_flexible_se = 0.005
    n_eff = 1319
    score = factory.SelfAttribute("em_strict")
    score_name = "em_strict"


class IngestJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "runs.IngestJob"

    repository = "SemiAnalysisAI/InferenceX"
    github_run_id = factory.Sequence(lambda n: 31_000_000_000 + n)
    requested_by = "test"
