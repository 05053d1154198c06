/* Tests for the run plan: a table of sources and budgets with the plan
 * and the reason each must give, the Lab rule and the mask's shape check. */
#include <string.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-run-plan.h"

#define GIB (G_GUINT64_CONSTANT (1) << 30)
#define MIB (G_GUINT64_CONSTANT (1) << 20)

/* A device whose in-memory run needs 10 bytes a voxel and whose slabs
 * hold 16 bytes a voxel of a slice: sizes a reader can check by hand. */
static guint64
fake_in_memory_bytes (guint nz, guint ny, guint nx, guint nc, gboolean mask)
{
  (void)nc;
  (void)mask;
  return (guint64)nz * ny * nx * 10;
}

static guint
fake_stream_max_depth (guint64 limit, guint ny, guint nx, guint nc, gint64 n_segments,
                       gboolean mask)
{
  (void)nc;
  (void)n_segments;
  (void)mask;
  return (guint)MAX (limit / ((guint64)ny * nx * 16), 1);
}

static const SvBackendClass fake_device_class = {
  .name = "cuda",
  .in_memory_bytes = fake_in_memory_bytes,
  .stream_max_depth = fake_stream_max_depth,
};

typedef enum
{
  ASK_AUTO,
  ASK_CPU,
  ASK_DEVICE,
} Ask;

typedef struct
{
  const char *what;
  /* the source */
  guint nz, ny, nx;
  SvSampleType type;
  gboolean from_file, mask, mask_from_file, stays_in_file;
  /* the budgets */
  Ask ask;
  guint64 host_bytes, host_held;
  guint n_devices;
  guint64 device_bytes;
  gboolean devices_listed;
  guint n_ranks, slab_depth;
  /* the plan */
  SvRunMode mode;
  gboolean on_device, falls_back;
  guint n_workers;
  guint64 memory_limit;
  guint slab_depth_planned, max_slab_depth;
  const char *reason;
} Row;

/* 512³ float32 in memory: image, prepared copy, assignment and labels,
 * 16 bytes a voxel, 2 GiB. Its streamed slabs under 1 GiB: a slice holds
 * 5 MiB (the file's slice twice, float32, assignment and labels); the
 * connectivity window of 2 grid steps + 3 = 223 slices of 8 bytes a voxel
 * and 6 MiB are set aside: (1 GiB − 452 MiB) / 5 MiB = 114 slices. */
static const Row rows[] = {
  { "array", 512, 512, 512, SV_SAMPLE_F32, FALSE, FALSE, FALSE, FALSE, ASK_CPU, 1 * GIB, 0, 0, 0, FALSE,
    0, 0, SV_RUN_IN_MEMORY, FALSE, FALSE, 1, 0, 0, 0,
    "in memory: the image is not a file read in slabs" },
  { "fits", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 4 * GIB, 0, 0, 0, FALSE, 0,
    0, SV_RUN_IN_MEMORY, FALSE, FALSE, 1, 0, 0, 0,
    "in memory: the run needs 2.0 GiB, 4.0 GiB allowed" },
  { "no-limit", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 0, 0, 0, 0, FALSE, 0,
    0, SV_RUN_IN_MEMORY, FALSE, FALSE, 1, 0, 0, 0, "in memory: the run needs 2.0 GiB, no limit" },
  { "too-big", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 1 * GIB, 0, 0, 0, FALSE,
    0, 0, SV_RUN_STREAMED, FALSE, FALSE, 1, 1 * GIB, 114, 0,
    "streamed: the run needs 2.0 GiB, 1.0 GiB allowed; 1022.0 MiB in temporary files" },
  /* What the process holds counts: 2 GiB + 1 GiB over 2.5 GiB, and the
   * slabs get 1.5 GiB. */
  { "held", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 5 * GIB / 2, 1 * GIB, 0, 0,
    FALSE, 0, 0, SV_RUN_STREAMED, FALSE, FALSE, 1, 3 * GIB / 2, 216, 0,
    "streamed: the run needs 3.0 GiB, 2.5 GiB allowed; 1020.0 MiB in temporary files" },
  { "slab-depth", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 8 * GIB, 0, 0, 0,
    FALSE, 0, 8, SV_RUN_STREAMED, FALSE, FALSE, 1, 8 * GIB, 8, 0,
    "streamed: slabs of 8 slices asked for; no temporary files" },
  { "ranks", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 1 * GIB, 0, 0, 0, FALSE,
    2, 0, SV_RUN_STREAMED, FALSE, FALSE, 1, 1 * GIB, 114, 0,
    "streamed: across 2 MPI ranks; 766.0 MiB in temporary files" },
  { "mask-file", 64, 64, 64, SV_SAMPLE_U16, TRUE, TRUE, TRUE, FALSE, ASK_CPU, 8 * GIB, 0, 0, 0, FALSE, 0,
    0, SV_RUN_STREAMED, FALSE, FALSE, 1, 8 * GIB, 64, 0,
    "streamed: the mask is read slab by slab; no temporary files" },
  /* Auto finds no device: the CPU, with nothing to fall back from. */
  { "auto-no-device", 64, 64, 64, SV_SAMPLE_U16, TRUE, FALSE, FALSE, FALSE, ASK_AUTO, 8 * GIB, 0, 0, 0,
    FALSE, 0, 0, SV_RUN_IN_MEMORY, FALSE, FALSE, 1, 0, 0, 0,
    "in memory: the run needs 4.0 MiB, 8.0 GiB allowed" },
  { "auto-device", 64, 64, 64, SV_SAMPLE_U16, TRUE, FALSE, FALSE, FALSE, ASK_AUTO, 8 * GIB, 0, 1, 1 * GIB,
    FALSE, 0, 0, SV_RUN_IN_MEMORY, TRUE, TRUE, 1, 0, 0, 0,
    "in memory: the run needs 4.0 MiB, 8.0 GiB allowed" },
  /* The device holds 10 bytes a voxel, 1.25 GiB, in 1 GiB: its slabs hold
   * 4 MiB a slice, so 256 slices fit. */
  { "device-too-small", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_AUTO, 8 * GIB, 0, 1,
    1 * GIB, FALSE, 0, 0, SV_RUN_STREAMED, TRUE, TRUE, 1, 8 * GIB, 256, 256,
    "streamed: the run needs 1.2 GiB on the GPU, 1.0 GiB there; no temporary files" },
  { "cpu-asked", 512, 512, 512, SV_SAMPLE_F32, TRUE, FALSE, FALSE, FALSE, ASK_CPU, 8 * GIB, 0, 1, 1 * GIB,
    FALSE, 0, 0, SV_RUN_IN_MEMORY, FALSE, FALSE, 1, 0, 0, 0,
    "in memory: the run needs 2.0 GiB, 8.0 GiB allowed" },
  /* The window's volume out of core streams, within what it allows. */
  { "stays-in-file", 64, 64, 64, SV_SAMPLE_U16, TRUE, FALSE, FALSE, TRUE, ASK_CPU, 256 * MIB, 0, 0,
    0, FALSE, 0, 0, SV_RUN_STREAMED, FALSE, FALSE, 1, 256 * MIB, 64, 0,
    "streamed: the image stays in its file; no temporary files" },
  /* Listed devices each take slabs; a device named does not fall back. */
  { "devices-listed", 64, 64, 64, SV_SAMPLE_U16, TRUE, FALSE, FALSE, FALSE, ASK_DEVICE, 8 * GIB, 0, 2,
    1 * GIB, TRUE, 0, 0, SV_RUN_STREAMED, TRUE, FALSE, 2, 8 * GIB, 64, 16384,
    "streamed: the slabs go to 2 listed GPUs; no temporary files" },
};

static void
row_budgets (const Row *row, SvRunBudgets *b)
{
  memset (b, 0, sizeof *b);
  b->backend.is_auto = row->ask == ASK_AUTO;
  b->backend.wants_device = row->ask == ASK_DEVICE;
  b->backend.device = row->ask != ASK_CPU ? &fake_device_class : NULL;
  b->host_bytes = row->host_bytes;
  b->host_held = row->host_held;
  b->n_devices = row->n_devices;
  b->device_bytes = row->device_bytes;
  b->devices_listed = row->devices_listed;
  b->n_ranks = row->n_ranks;
  b->slab_depth = row->slab_depth;
}

static void
test_table (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      const Row *row = &rows[i];
      const SvRunSource source = { row->nz,        row->ny,   row->nx,
                                   1,              row->type, row->from_file,
                                   row->mask,      row->mask_from_file,
                                   row->stays_in_file };
      g_autoptr (GError) error = NULL;
      SvSlicParams params;
      SvRunBudgets budgets;
      SvRunPlan plan;

      g_test_message ("row %s", row->what);
      sv_slic_params_init_defaults (&params);
      row_budgets (row, &budgets);
      g_assert_true (sv_run_plan (&source, &params, &budgets, &plan, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (plan.reason, ==, row->reason);
      g_assert_cmpint (plan.mode, ==, row->mode);
      g_assert_cmpint (plan.on_device, ==, row->on_device);
      g_assert_true (plan.backend
                     == (row->on_device ? &fake_device_class : sv_backend_cpu_class ()));
      g_assert_cmpint (plan.falls_back, ==, row->falls_back);
      g_assert_cmpuint (plan.n_workers, ==, row->n_workers);
      g_assert_cmpuint (plan.memory_limit, ==, row->memory_limit);
      g_assert_cmpuint (plan.slab_depth, ==, row->slab_depth_planned);
      g_assert_cmpuint (plan.max_slab_depth, ==, row->max_slab_depth);
      g_assert_false (plan.lab);
    }
}

/* What a streamed run keeps between passes and where: 64×256×256 with
 * 4096 segments (grid step 10: a connectivity window of 23 slices of 8
 * bytes a voxel, 11.5 MiB, and 6 MiB set aside: 17.5 MiB), slabs of 8
 * slices. A uint8 slab slice holds 896 KiB (the file's slice twice,
 * float32, assignment and labels): 7 MiB a slab, 24.5 MiB with the
 * rest. Kept: the prepared image, as its samples where that is exact
 * (4 MiB of uint8, 8 MiB of uint16), else as float32 (16 MiB), and the
 * labels as int32 (16 MiB); memory takes the slabs first, then the
 * labels' slices of 256 KiB. */
typedef struct
{
  const char *what;
  guint nc;
  SvSampleType type;
  double sigma;
  SvConvert2Lab convert2lab;
  guint64 host_bytes, host_held;
  guint slab_depth, n_ranks;
  guint64 temp_bytes;
} TempRow;

static const TempRow temp_rows[] = {
  /* 39.5 MiB left: all of it in memory. */
  { "uint8-fits", 1, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 64 * MIB, 0, 8, 0, 0 },
  /* 7.5 MiB left: the 4 MiB of samples, then 14 slices of labels; 50
   * slices of labels in the file. */
  { "uint8", 1, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 32 * MIB, 0, 8, 0, 25 * MIB / 2 },
  /* Nothing left: 4 + 16 MiB. */
  { "uint8-no-room", 1, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 24 * MIB, 0, 8, 0, 20 * MIB },
  /* A uint16 slice holds 1 MiB: 6.5 MiB left, six slabs of 1 MiB and two
   * slices of labels: 2 + 15.5 MiB. */
  { "uint16", 1, SV_SAMPLE_U16, 0, SV_CONVERT2LAB_NO, 32 * MIB, 0, 8, 0, 35 * MIB / 2 },
  /* float32, 1.25 MiB a slice: 4.5 MiB left, two slabs of 2 MiB and two
   * slices of labels: 12 + 15.5 MiB. */
  { "float32", 1, SV_SAMPLE_F32, 0, SV_CONVERT2LAB_NO, 32 * MIB, 0, 8, 0, 55 * MIB / 2 },
  /* Smoothed: the float32 image, 30 of its slices in the 7.5 MiB, no room
   * for labels: 8.5 + 16 MiB. */
  { "uint8-smoothed", 1, SV_SAMPLE_U8, 1.0, SV_CONVERT2LAB_NO, 32 * MIB, 0, 8, 0, 49 * MIB / 2 },
  /* RGB in Lab: 1664 KiB a slice, 30.5 MiB with the rest, 17.5 MiB left:
   * two float32 slabs of 6 MiB and 22 slices of labels: 36 + 10.5 MiB. */
  { "rgb-lab", 3, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_YES, 48 * MIB, 0, 8, 0, 93 * MIB / 2 },
  /* The same RGB without Lab keeps its 12 MiB of samples: 10.5 MiB. */
  { "rgb", 3, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 48 * MIB, 0, 8, 0, 21 * MIB / 2 },
  /* Rank 0 of 2 keeps its 32 slices (2 MiB) and every rank's labels. */
  { "ranks", 1, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 32 * MIB, 0, 8, 2, 21 * MIB / 2 },
  /* Slabs from the limit: (32 − 17.5 MiB) / 896 KiB = 16 slices, 0.5 MiB
   * left, for two slices of labels: 4 + 15.5 MiB. What the process holds
   * is not the run's. */
  { "depth-from-limit", 1, SV_SAMPLE_U8, 0, SV_CONVERT2LAB_NO, 33 * MIB, 1 * MIB, 0, 0,
    39 * MIB / 2 },
};

/* The plan of a row; with an output, under the CLI's name of the limit. */
static void
temp_row_plan (const TempRow *row, gboolean measured, guint64 temp_free, const char *output,
               SvRunPlan *plan, GError **error, gboolean *ok)
{
  const SvRunSource source = { 64, 256, 256, row->nc, row->type, TRUE, FALSE, FALSE, FALSE };
  SvRunBudgets budgets = { 0 };
  SvSlicParams params;

  sv_slic_params_init_defaults (&params);
  params.n_segments = 4096;
  params.sigma[0] = params.sigma[1] = params.sigma[2] = row->sigma;
  params.convert2lab = row->convert2lab;
  budgets.host_bytes = row->host_bytes;
  budgets.host_held = row->host_held;
  budgets.slab_depth = row->slab_depth;
  budgets.n_ranks = row->n_ranks;
  budgets.temp_measured = measured;
  budgets.temp_free = temp_free;
  budgets.output_name = output;
  budgets.limit_name = output != NULL ? "--memory-limit" : NULL;
  *ok = sv_run_plan (&source, &params, &budgets, plan, error);
}

static void
test_temp_table (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (temp_rows); i++)
    {
      const TempRow *row = &temp_rows[i];
      g_autoptr (GError) error = NULL;
      SvRunPlan plan;
      gboolean ok;

      g_test_message ("row %s", row->what);
      temp_row_plan (row, FALSE, 0, NULL, &plan, &error, &ok);
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_cmpint (plan.mode, ==, SV_RUN_STREAMED);
      g_assert_cmpuint (plan.temp_bytes, ==, row->temp_bytes);
    }
}

/* The estimate is in the reason. */
static void
test_temp_reason (void)
{
  SvRunPlan plan;
  gboolean ok;

  temp_row_plan (&temp_rows[1], FALSE, 0, NULL, &plan, NULL, &ok);
  g_assert_cmpstr (plan.reason, ==,
                   "streamed: slabs of 8 slices asked for; 12.5 MiB in temporary files");
  temp_row_plan (&temp_rows[0], FALSE, 0, NULL, &plan, NULL, &ok);
  g_assert_cmpstr (plan.reason, ==, "streamed: slabs of 8 slices asked for; no temporary files");
  temp_row_plan (&temp_rows[9], FALSE, 0, NULL, &plan, NULL, &ok);
  g_assert_cmpstr (plan.reason, ==,
                   "streamed: the run needs 65.0 MiB, 33.0 MiB allowed; "
                   "19.5 MiB in temporary files");
}

/* A run whose temporary files need more than the free space fails at
 * once, saying how much memory would keep them small enough; the plan is
 * filled all the same. Exactly enough is enough. */
static void
test_temp_space_checked (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) unnamed = NULL;
  g_autoptr (GError) grows = NULL;
  SvRunPlan plan;
  gboolean ok;

  temp_row_plan (&temp_rows[1], TRUE, 25 * MIB / 2, "out.tif", &plan, &error, &ok);
  g_assert_no_error (error);
  g_assert_true (ok);

  /* 10 MiB free: 10 of the 20 MiB kept must stay in memory, 10 MiB left
   * beside the 24.5 MiB of slabs. */
  temp_row_plan (&temp_rows[1], TRUE, 10 * MIB, "out.tif", &plan, &error, &ok);
  g_assert_false (ok);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_SPACE);
  g_assert_cmpstr (error->message, ==,
                   "the streamed run needs 12.5 MiB of temporary files beside out.tif but only "
                   "10.0 MiB is free there: free 2.5 MiB more there, or raise --memory-limit to "
                   "at least 34.5 MiB (now 32.0 MiB)");
  g_assert_cmpint (plan.mode, ==, SV_RUN_STREAMED);
  g_assert_cmpuint (plan.temp_bytes, ==, 25 * MIB / 2);

  temp_row_plan (&temp_rows[2], TRUE, 0, NULL, &plan, &unnamed, &ok);
  g_assert_false (ok);
  g_assert_cmpstr (unnamed->message, ==,
                   "the streamed run needs 20.0 MiB of temporary files beside the output but "
                   "only 0 bytes is free there: free 20.0 MiB more there, or raise the memory "
                   "limit to at least 44.5 MiB (now 24.0 MiB)");

  /* Slabs sized from the limit grow with it up to the whole volume (64
   * slices, 56 MiB: 73.5 MiB with the rest) before anything more is
   * kept: 10 MiB more, and the 1 MiB the process holds. */
  temp_row_plan (&temp_rows[9], TRUE, 10 * MIB, "out.tif", &plan, &grows, &ok);
  g_assert_false (ok);
  g_assert_cmpstr (grows->message, ==,
                   "the streamed run needs 19.5 MiB of temporary files beside out.tif but only "
                   "10.0 MiB is free there: free 9.5 MiB more there, or raise --memory-limit to "
                   "at least 84.5 MiB (now 33.0 MiB)");
}

/* An in-memory run writes no temporary files: no check. */
static void
test_temp_space_in_memory (void)
{
  const SvRunSource source = { 64, 256, 256, 1, SV_SAMPLE_U8, TRUE, FALSE, FALSE, FALSE };
  g_autoptr (GError) error = NULL;
  SvRunBudgets budgets = { 0 };
  SvSlicParams params;
  SvRunPlan plan;

  sv_slic_params_init_defaults (&params);
  budgets.host_bytes = 1 * GIB;
  budgets.temp_measured = TRUE;
  g_assert_true (sv_run_plan (&source, &params, &budgets, &plan, &error));
  g_assert_no_error (error);
  g_assert_cmpint (plan.mode, ==, SV_RUN_IN_MEMORY);
  g_assert_cmpuint (plan.temp_bytes, ==, 0);
}

typedef struct
{
  SvConvert2Lab convert2lab;
  guint nz, nc;
  gboolean ok, lab;
} LabRow;

static void
test_lab_rule (void)
{
  static const LabRow lab_rows[] = {
    { SV_CONVERT2LAB_AUTO, 1, 3, TRUE, TRUE },  { SV_CONVERT2LAB_AUTO, 5, 3, TRUE, FALSE },
    { SV_CONVERT2LAB_AUTO, 1, 1, TRUE, FALSE }, { SV_CONVERT2LAB_YES, 5, 3, TRUE, TRUE },
    { SV_CONVERT2LAB_YES, 1, 1, FALSE, FALSE }, { SV_CONVERT2LAB_YES, 1, 4, FALSE, FALSE },
    { SV_CONVERT2LAB_NO, 1, 3, TRUE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (lab_rows); i++)
    {
      const LabRow *r = &lab_rows[i];
      g_autoptr (GError) error = NULL;
      gboolean lab = !r->lab;

      g_assert_cmpint (sv_run_lab_applies (r->convert2lab, r->nz, r->nc, &lab, &error), ==, r->ok);
      if (r->ok)
        g_assert_cmpint (lab, ==, r->lab);
      else
        g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
    }
}

static void
test_lab_rule_in_plan (void)
{
  const SvRunSource source = { 1, 32, 32, 1, SV_SAMPLE_U8, TRUE, FALSE, FALSE, FALSE };
  g_autoptr (GError) error = NULL;
  SvRunBudgets budgets = { 0 };
  SvSlicParams params;
  SvRunPlan plan;

  sv_slic_params_init_defaults (&params);
  params.convert2lab = SV_CONVERT2LAB_YES;
  g_assert_false (sv_run_plan (&source, &params, &budgets, &plan, &error));
  g_assert_cmpstr (error->message, ==,
                   "Lab colorspace conversion requires a RGB image (3 channels); "
                   "this image has 1 channel");
}

static void
test_mask_shape (void)
{
  const guint image[3] = { 6, 20, 24 }, mask[3] = { 6, 20, 23 }, flat[3] = { 1, 20, 23 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) unnamed = NULL;

  g_assert_true (sv_run_check_mask ("m.tif", image, "in.tif", image, NULL));
  g_assert_false (sv_run_check_mask ("m.tif", mask, "in.tif", image, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_cmpstr (error->message, ==, "m.tif: the mask is 6×20×23 but the image in.tif is 6×20×24");
  g_assert_false (sv_run_check_mask (NULL, flat, NULL, image, &unnamed));
  g_assert_cmpstr (unnamed->message, ==, "the mask is 20×23 but the image is 6×20×24");
}

/* The user's word, read once, and what it comes to with and without a
 * device; what the classes say of themselves. */
static void
test_backend_resolve (void)
{
  const SvBackendClass *cpu = sv_backend_cpu_class ();
  g_autoptr (GError) error = NULL;
  SvBackendChoice choice;

  g_assert_true (sv_backend_choose ("cpu", &choice, NULL));
  g_assert_true (sv_backend_resolve (&choice, 2) == cpu);
  g_assert_true (sv_backend_choose (NULL, &choice, NULL));
  g_assert_true (choice.is_auto);
  /* No device class is registered in this program. */
  g_assert_null (choice.device);
  g_assert_true (sv_backend_resolve (&choice, 2) == cpu);
  choice.device = &fake_device_class;
  g_assert_true (sv_backend_resolve (&choice, 0) == cpu);
  g_assert_true (sv_backend_resolve (&choice, 1) == &fake_device_class);
  g_assert_true (sv_backend_choose ("cuda", &choice, NULL));
  g_assert_true (choice.wants_device);
  g_assert_null (sv_backend_resolve (&choice, 0));
  g_assert_false (sv_backend_choose ("gpu", &choice, &error));
  g_assert_cmpstr (error->message, ==, "unknown backend 'gpu': use cpu, cuda or auto");

  g_assert_true (sv_backend_class_lookup ("cpu") == cpu);
  g_assert_null (sv_backend_class_lookup ("cuda"));
  g_assert_false (sv_backend_class_is_device (cpu));
  g_assert_true (sv_backend_class_can_stream (cpu));
  g_assert_false (sv_backend_class_keeps_labels_on_device (cpu));
  g_assert_cmpstr (sv_backend_class_display_name (cpu, NULL), ==, "the CPU");
  g_assert_cmpstr (sv_backend_class_title (cpu, NULL), ==, "CPU");
  g_assert_cmpstr (sv_backend_class_title (NULL, "—"), ==, "—");
  g_assert_false (sv_backend_class_is_device (NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/run-plan/table", test_table);
  g_test_add_func ("/engine/run-plan/temporary-files/table", test_temp_table);
  g_test_add_func ("/engine/run-plan/temporary-files/reason", test_temp_reason);
  g_test_add_func ("/engine/run-plan/temporary-files/space-checked", test_temp_space_checked);
  g_test_add_func ("/engine/run-plan/temporary-files/in-memory", test_temp_space_in_memory);
  g_test_add_func ("/engine/run-plan/lab-rule", test_lab_rule);
  g_test_add_func ("/engine/run-plan/lab-rule-in-plan", test_lab_rule_in_plan);
  g_test_add_func ("/engine/run-plan/mask-shape", test_mask_shape);
  g_test_add_func ("/engine/run-plan/backend-resolve", test_backend_resolve);
  return g_test_run ();
}
