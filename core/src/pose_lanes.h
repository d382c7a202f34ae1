/* One width of cq_poses_from_quats's lanes (pose_many.c, which includes
 * this once per width): CQ_LANES poses at a time, the functions named
 * through CQ_LANE(name), compiled with CQ_LANE_ATTR, square roots by
 * CQ_LANE_SQRT (correctly rounded, as sqrt is), the quaternions' lanes
 * loaded by CQ_LANE(cq_load), with the vectors CQ_LANE(cq_dv) and
 * CQ_LANE(cq_lv) (defined before). Each lane runs
 * cq_pose_from_quat's operations in its order (see pose_many.c). */


/* A matrix per lane: c[i][j] is column i's component j. */
typedef struct CQ_LANE(cq_mv) {
    CQ_LANE(cq_dv) c[3][3];
} CQ_LANE(cq_mv);

/* Lanes where |v - target| <= tol (never for NaN): all ones, else 0. */
CQ_LANE_ATTR static inline CQ_LANE(cq_lv) CQ_LANE(cq_within)(CQ_LANE(cq_dv) v, double target, double tol)
{
    CQ_LANE(cq_dv) d = v - target;
    return (d <= tol) & (d >= -tol);
}

/* Lanes of column i . column j, summed as cq_dot sums. */
CQ_LANE_ATTR static inline CQ_LANE(cq_dv) CQ_LANE(cq_col_dot)(const CQ_LANE(cq_mv) *m, int i, int j)
{
    return m->c[i][0] * m->c[j][0] + m->c[i][1] * m->c[j][1] + m->c[i][2] * m->c[j][2];
}

/* Lanes whose matrix is exact (shape.c's cq_exact_rotation). */
CQ_LANE_ATTR static inline CQ_LANE(cq_lv) CQ_LANE(cq_exact)(const CQ_LANE(cq_mv) *m)
{
    return CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 0, 0), 1, CQ_EXACT_TOL) &
           CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 0, 1), 0, CQ_EXACT_TOL) &
           CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 0, 2), 0, CQ_EXACT_TOL) &
           CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 1, 1), 1, CQ_EXACT_TOL) &
           CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 1, 2), 0, CQ_EXACT_TOL) &
           CQ_LANE(cq_within)(CQ_LANE(cq_col_dot)(m, 2, 2), 1, CQ_EXACT_TOL);
}

/* in[0 .. CQ_LANES - 1] into *out[...] when all are plain: finite
 * positions, unit quaternions within tolerance (a NaN or an infinity
 * fails that too), exact matrices. False, with nothing promised written,
 * when one is not. */
CQ_LANE_ATTR static bool CQ_LANE(cq_pose_lanes)(const cq_quat_pose *in, cq_xform *const *out)
{
    for (int k = 0; k < CQ_LANES; k++)
        if (!cq_v3_finite(in[k].position))
            return false;
    CQ_LANE(cq_dv) x, y, z, w;
    CQ_LANE(cq_load)(in, &x, &y, &z, &w);
    CQ_LANE(cq_dv) len = CQ_LANE_SQRT(x * x + y * y + z * z + w * w);
    CQ_LANE(cq_lv) ok = CQ_LANE(cq_within)(len, 1, CQ_QUAT_UNIT_TOL);
    x /= len, y /= len, z /= len, w /= len;
    /* cq_quat_to_mat3, term by term */
    CQ_LANE(cq_mv) m = {{
        {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)},
        {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)},
        {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)},
    }};
    ok &= CQ_LANE(cq_exact)(&m);
    long long all = ok[0];
    for (int k = 1; k < CQ_LANES; k++)
        all &= ok[k];
    if (!all)
        return false;
    for (int k = 0; k < CQ_LANES; k++) {
        out[k]->p = in[k].position;
        for (int i = 0; i < 3; i++)
            out[k]->r.c[i] = cq_v3(m.c[i][0][k], m.c[i][1][k], m.c[i][2][k]);
    }
    return true;
}
