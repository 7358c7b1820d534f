from django.shortcuts import render

from runs import selectors


def home(request):
    return render(
        request,
        "runs/home.html",
        {
            "official_runs": selectors.run_list_recent(official=True, limit=5),
            "unofficial_runs": selectors.run_list_recent(official=False, limit=10),
        },
    )
