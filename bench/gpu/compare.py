"""Join measured.csv (check.sh, on the GPU) with deviceless.csv (CPUs):
per configuration, the measured step over each modeled one, and XLA's
memory beside the peak JAX saw.

    python3 bench/gpu/compare.py MEASURED.csv DEVICELESS.csv
"""

import csv
import sys


def rows(path):
    with open(path, encoding="utf-8") as f:
        return {r["config"]: r for r in csv.DictReader(f)}


def main(measured_path, deviceless_path):
    measured, deviceless = rows(measured_path), rows(deviceless_path)
    print("config, measured s, modeled on the GPU s (ratio), modeled "
          "deviceless s (ratio), peak GB, XLA GB on the GPU, deviceless GB")
    for name, m in measured.items():
        d = deviceless.get(name, {})
        t = float(m["measured_s"])
        on_gpu = float(m["modeled_s"])
        off_gpu = float(d.get("modeled_s", "nan"))
        print(f"{name}, {t:.4f}, {on_gpu:.4f} ({t / on_gpu:.3f}), "
              f"{off_gpu:.4f} ({t / off_gpu:.3f}), {float(m['peak_gb']):.2f}"
              f", {float(m['need_gb']):.2f}, "
              f"{float(d.get('need_gb', 'nan')):.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
