/* Supervox engine: separable Gaussian smoothing, reproducing
 * scipy.ndimage.gaussian_filter(mode='reflect', truncate=4.0) on float32
 * images, as scikit-image's slic() calls it. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-prepare.h"

#include <math.h>

/* Lines of one axis are filtered in blocks of this many neighbouring lines,
 * so that a z or y pass reads memory contiguously. */
#define SV_GAUSSIAN_BLOCK 64

/* numpy's pairwise summation of a float64 array (np.sum), so that the
 * kernel is normalised by the very same sum scipy divides by. */
static double
pairwise_sum (const double *a, gsize n)
{
  if (n < 8)
    {
      double res = 0.0;
      for (gsize i = 0; i < n; i++)
        res += a[i];
      return res;
    }
  else if (n <= 128)
    {
      double r[8], res;
      gsize i;

      for (int j = 0; j < 8; j++)
        r[j] = a[j];
      for (i = 8; i < n - (n % 8); i += 8)
        for (int j = 0; j < 8; j++)
          r[j] += a[i + j];
      res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
      for (; i < n; i++)
        res += a[i];
      return res;
    }
  else
    {
      gsize n2 = n / 2;
      n2 -= n2 % 8;
      return pairwise_sum (a, n2) + pairwise_sum (a + n2, n - n2);
    }
}

/* scipy's _gaussian_kernel1d(sigma, 0, radius): sigma*sigma is a float32
 * product (sigma is a numpy float32 there), the rest is float64. Returns
 * the 2*radius+1 weights; the kernel is symmetric, so scipy's reversal for
 * correlation changes nothing. */
double *
sv_gaussian_kernel (float sigma, int *radius_out)
{
  const double sd = (double)sigma;
  const int radius = (int)(4.0 * sd + 0.5);
  const float sigma2 = sigma * sigma;
  const double factor = -0.5 / (double)sigma2;
  const gsize n = 2 * (gsize)radius + 1;
  double *w = g_new (double, n);

  for (int i = -radius; i <= radius; i++)
    w[i + radius] = exp (factor * (double)((gint64)i * i));
  const double sum = pairwise_sum (w, n);
  for (gsize i = 0; i < n; i++)
    w[i] /= sum;

  *radius_out = radius;
  return w;
}

typedef struct
{
  float *data;
  gsize length;          /* samples along the axis */
  gsize stride;          /* floats between neighbours along the axis = lines per outer index */
  gsize n_outer;         /* independent groups of `stride` lines */
  const double *weights; /* centred: weights[0] is the middle tap */
  int radius;
  gsize n_items; /* n_outer * blocks per outer index */
  gsize blocks_per_outer;
} AxisPass;

typedef struct
{
  const AxisPass *pass;
  gsize first_item, end_item;
} AxisTask;

/* 'reflect' extension (d c b a | a b c d), periodic with period 2L, which
 * is what scipy's NI_ExtendLine produces for lines shorter than the
 * radius too. */
static gsize
reflect_index (gint64 i, gint64 length)
{
  const gint64 period = 2 * length;
  gint64 m = i % period;
  if (m < 0)
    m += period;
  if (m >= length)
    m = period - 1 - m;
  return (gsize)m;
}

static void
filter_items (const AxisPass *p, gsize first_item, gsize end_item)
{
  const gsize L = p->length;
  const int r = p->radius;
  const gsize ext_len = L + 2 * (gsize)r;
  g_autofree double *ext = g_new (double, ext_len *SV_GAUSSIAN_BLOCK);
  double acc[SV_GAUSSIAN_BLOCK];
  const double *w = p->weights;

  for (gsize item = first_item; item < end_item; item++)
    {
      const gsize outer = item / p->blocks_per_outer;
      const gsize first_line = (item % p->blocks_per_outer) * SV_GAUSSIAN_BLOCK;
      const gsize nb = MIN (SV_GAUSSIAN_BLOCK, p->stride - first_line);
      float *base = p->data + outer * L * p->stride + first_line;

      /* Lines into double, then the reflected margins. */
      for (gsize k = 0; k < L; k++)
        {
          const float *src = base + k * p->stride;
          double *dst = ext + (k + (gsize)r) * SV_GAUSSIAN_BLOCK;
          for (gsize j = 0; j < nb; j++)
            dst[j] = (double)src[j];
        }
      for (int k = 1; k <= r; k++)
        {
          const gsize before = reflect_index (-k, (gint64)L);
          const gsize after = reflect_index ((gint64)L - 1 + k, (gint64)L);
          double *db = ext + (gsize)(r - k) * SV_GAUSSIAN_BLOCK;
          double *da = ext + (L - 1 + (gsize)r + (gsize)k) * SV_GAUSSIAN_BLOCK;
          const double *sb = ext + (before + (gsize)r) * SV_GAUSSIAN_BLOCK;
          const double *sa = ext + (after + (gsize)r) * SV_GAUSSIAN_BLOCK;
          for (gsize j = 0; j < nb; j++)
            {
              db[j] = sb[j];
              da[j] = sa[j];
            }
        }

      /* scipy's symmetric NI_Correlate1D: out = in[0]*w[0], then
       * out += (in[-j] + in[j]) * w[j] for j = radius down to 1. */
      for (gsize k = 0; k < L; k++)
        {
          const double *centre = ext + (k + (gsize)r) * SV_GAUSSIAN_BLOCK;
          for (gsize j = 0; j < nb; j++)
            acc[j] = centre[j] * w[0];
          for (int t = r; t >= 1; t--)
            {
              const double *lo = centre - (gsize)t * SV_GAUSSIAN_BLOCK;
              const double *hi = centre + (gsize)t * SV_GAUSSIAN_BLOCK;
              const double wt = w[t];
              for (gsize j = 0; j < nb; j++)
                acc[j] += (lo[j] + hi[j]) * wt;
            }
          float *dst = base + k * p->stride;
          for (gsize j = 0; j < nb; j++)
            dst[j] = (float)acc[j];
        }
    }
}

static gpointer
axis_task_thread (gpointer user_data)
{
  const AxisTask *task = user_data;
  filter_items (task->pass, task->first_item, task->end_item);
  return NULL;
}

/* Lines are independent, so any split over threads gives the same bytes. */
static void
run_axis (AxisPass *pass, int n_threads)
{
  gsize n_workers = n_threads > 0 ? (gsize)n_threads : (gsize)g_get_num_processors ();
  n_workers = CLAMP (n_workers, 1, MAX (pass->n_items, 1));

  if (n_workers == 1)
    {
      filter_items (pass, 0, pass->n_items);
      return;
    }

  g_autofree AxisTask *tasks = g_new (AxisTask, n_workers);
  g_autofree GThread **threads = g_new0 (GThread *, n_workers);
  for (gsize t = 0; t < n_workers; t++)
    {
      tasks[t].pass = pass;
      tasks[t].first_item = pass->n_items * t / n_workers;
      tasks[t].end_item = pass->n_items * (t + 1) / n_workers;
    }
  for (gsize t = 1; t < n_workers; t++)
    threads[t] = g_thread_new ("sv-gaussian", axis_task_thread, &tasks[t]);
  axis_task_thread (&tasks[0]);
  for (gsize t = 1; t < n_workers; t++)
    g_thread_join (threads[t]);
}

void
sv_gaussian_smooth (float *data, guint nz, guint ny, guint nx, guint nc, const float sigma_zyx[3],
                    int n_threads)
{
  g_return_if_fail (sigma_zyx != NULL);

  const gsize dims[3] = { nz, ny, nx };
  if (data == NULL || nz == 0 || ny == 0 || nx == 0 || nc == 0)
    return;

  for (int axis = 0; axis < 3; axis++)
    {
      /* scipy skips axes with sigma <= 1e-15 (compared in double). */
      if (!((double)sigma_zyx[axis] > 1e-15))
        continue;

      gsize stride = nc, n_outer = 1;
      for (int a = axis + 1; a < 3; a++)
        stride *= dims[a];
      for (int a = 0; a < axis; a++)
        n_outer *= dims[a];

      int radius;
      g_autofree double *kernel = sv_gaussian_kernel (sigma_zyx[axis], &radius);

      AxisPass pass = {
        .data = data,
        .length = dims[axis],
        .stride = stride,
        .n_outer = n_outer,
        .weights = kernel + radius,
        .radius = radius,
        .blocks_per_outer = (stride + SV_GAUSSIAN_BLOCK - 1) / SV_GAUSSIAN_BLOCK,
      };
      pass.n_items = pass.n_outer * pass.blocks_per_outer;
      run_axis (&pass, n_threads);
    }
}
