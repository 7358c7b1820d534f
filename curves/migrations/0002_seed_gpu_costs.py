from django.db import migrations

# Editable estimates, not quotes: all-in watts per GPU (GPU board power plus its share of host,
# network and cooling) and a typical cloud rental price per GPU-hour in USD. Admins adjust them
# in the admin; the cost and energy charts read whatever is stored.
GPU_COST_ESTIMATES = {
    "h100": (1400, 2.00),
    "h200": (1550, 2.30),
    "b200": (1900, 3.20),
    "b300": (2200, 3.80),
    "gb200": (2100, 3.90),
    "gb300": (2400, 4.50),
    "mi300x": (1400, 1.85),
    "mi325x": (1650, 2.10),
    "mi355x": (2050, 2.60),
}


def seed(apps, schema_editor):
    GpuCost = apps.get_model("curves", "GpuCost")
    for hardware, (watts, dollars) in GPU_COST_ESTIMATES.items():
        GpuCost.objects.get_or_create(
            hardware=hardware,
            defaults={
                "watts_per_gpu": watts,
                "dollars_per_gpu_hour": dollars,
                "notes": "Seeded estimate; edit when better numbers are known.",
            },
        )


def unseed(apps, schema_editor):
    GpuCost = apps.get_model("curves", "GpuCost")
    GpuCost.objects.filter(hardware__in=GPU_COST_ESTIMATES).delete()


class Migration(migrations.Migration):
    dependencies = [("curves", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
